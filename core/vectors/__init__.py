"""Embeddings and what is computed over them: the embedders (local ONNX MiniLM, or a remote API), the
approximate index (IVF over k-means cells), and the clustering the gap report uses.

May import: common.
"""
