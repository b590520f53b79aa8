"""From the fragments found to the answer shown: the extractive answerer and the answerability judge, the
LLM answerer, quotes verified verbatim, figures and checked calculations, review dates, and the pipeline
that runs one question through all of it and writes the run log.

May import: common, vectors, store, ingest, retrieval.
"""
