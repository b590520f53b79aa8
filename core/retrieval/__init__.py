"""From a question to the fragments that may answer it: the knowledge base kept in line with the folder,
the generation it serves, and the exact, approximate or in-database search over it.

May import: common, vectors, store, ingest.
"""
