"""The values and helpers every stage shares: errors, settings, text and language, the fragments, hits and
documents that pass between stages (`values`), the answer and its parts (`answers`), and the HTTP client.

May import: nothing else in core.
"""
