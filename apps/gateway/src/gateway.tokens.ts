/**
 * Injection tokens of what the gateway's classes are given rather than built by Nest: what main.ts
 * opens (config, logger, connections) and the library objects the module makes from it. The app's
 * own classes are injected by their class.
 */
export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');
export const MEMORY_CLIENT = Symbol('MEMORY_CLIENT');
export const REDIS = Symbol('REDIS');
export const API_KEYS = Symbol('API_KEYS');
export const TIER1_CACHE = Symbol('TIER1_CACHE');
export const MEMORY_TOOL_EXECUTOR = Symbol('MEMORY_TOOL_EXECUTOR');
/** The memory tools each request is offered (none when MEMORY_TOOL_MAX_ITERATIONS is 0). */
export const OFFERED_TOOLS = Symbol('OFFERED_TOOLS');
export const MEMORY_GATE_OPTIONS = Symbol('MEMORY_GATE_OPTIONS');
export const SURFACES = Symbol('SURFACES');
export const CHAT_UPSTREAM = Symbol('CHAT_UPSTREAM');
export const ANTHROPIC_UPSTREAM = Symbol('ANTHROPIC_UPSTREAM');
