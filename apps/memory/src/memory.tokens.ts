/** Injection tokens of the memory app (explicit tokens: nothing relies on inferred types). */
export const CONFIG = 'ENGRAM_CONFIG';
export const LOGGER = 'ENGRAM_LOGGER';
export const MEMORY_SERVICE = 'MEMORY_SERVICE';
/** The store's feed of committed batches (MemoryService.commits), read by the outbox. */
export const COMMIT_FEED = 'COMMIT_FEED';
export const REDIS = 'ENGRAM_REDIS';
export const METRICS = 'ENGRAM_METRICS';
export const INTERNAL_TOKEN = 'ENGRAM_INTERNAL_TOKEN';
export const EXTRACTION_SPOOL = 'EXTRACTION_SPOOL';
/** The embedder's model name (string), or null with hybrid search off: with EMBEDDINGS_MODEL_DIR it is known only once the folder is read. */
export const EMBEDDING_MODEL = 'EMBEDDING_MODEL';
