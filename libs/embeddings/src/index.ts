/**
 * @engram/embeddings — the client of an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama,
 * llama.cpp, LM Studio, TEI), shared by the memory service (query embeddings, at search time) and
 * the worker (entry embeddings, off the write path).
 */
export * from './embedder.js';
export * from './openai-embeddings-client.js';
export * from './vector-codec.js';
