/** Injection tokens of the worker's side effects (memory RPC, upstream model, clock) and settings. */
export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');
export const MEMORY = Symbol('MEMORY');
export const MEMORY_CLIENT = Symbol('MEMORY_CLIENT');
export const LLM = Symbol('LLM');
export const CLOCK = Symbol('CLOCK');
export const SERVED_QUEUES = Symbol('SERVED_QUEUES');
export const QUEUES = Symbol('QUEUES');
export const REDIS = Symbol('REDIS');
export const EMBEDDER = Symbol('EMBEDDER');
