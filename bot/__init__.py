"""Verbatim's adapters: the command line and console, Slack and Telegram."""
