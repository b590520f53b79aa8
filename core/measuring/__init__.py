"""How well it answers and what it misses: the gold-set evaluation, `verbatim check`, the usage and gap
report, the document register, and the stand-in embedder those checks share.

May import: common, vectors, store, ingest, retrieval, answering.
"""
