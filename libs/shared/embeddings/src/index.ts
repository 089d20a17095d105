/**
 * @engram/embeddings — how texts become vectors, shared by the memory service (query embeddings, at
 * search time) and the worker (entry embeddings, off the write path): the client of an
 * OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp, LM Studio, TEI), or a
 * sentence-embedding model folder run in-process with ONNX Runtime.
 */
export * from './create-embedder.js';
export * from './embedder.js';
export * from './model-folder.js';
export * from './onnx-embedder.js';
export * from './openai-embeddings-client.js';
export * from './sentence-encoder.js';
export * from './vector-codec.js';
