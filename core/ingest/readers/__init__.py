"""Readers turn a file's bytes into a format-neutral document, one module per format.

A reader returns a `Parsed` (title if the file names one, the metadata the file carries,
and sections with heading paths, text and an optional page number); `parse_document`
picks the reader by suffix, merges the metadata (folder defaults < the file's own < its
sidecar), and checks it. Register another format with `READERS[".ext"] = read`.
"""

from core.ingest.readers.registry import READERS, Reader, parse_document, suffixes

__all__ = ["READERS", "Reader", "parse_document", "suffixes"]
