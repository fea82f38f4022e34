"""The search index's files in a workspace's state directory, named once: the index writes
them, the flush job writes two of them off the engine thread, and `doctor` and team
snapshots read them without loading the index."""

BM25_FILE = "bm25.bin"            # flat postings (postings.py)
VECTORS_FILE = "vectors.npz"
META_FILE = "search_meta.json"
META_DELTA_FILE = "search_meta.delta.json"   # a server's changes since META_FILE (search_meta.py)
JOURNAL_FILE = "saves.journal"    # files saved since the keyword side was written (generation.py)
INDEX_FILES = (BM25_FILE, VECTORS_FILE, META_FILE, META_DELTA_FILE)   # what a reader stats
