/** Injection tokens: the composition root (main.ts) builds plain objects, Nest only hands them to controllers. */
export const TURN_SERVICE = Symbol('TURN_SERVICE');
export const ACCESS_SERVICE = Symbol('ACCESS_SERVICE');
export const MEMORY_REST_SERVICE = Symbol('MEMORY_REST_SERVICE');
export const HEALTH_SERVICE = Symbol('HEALTH_SERVICE');
export const METRICS = Symbol('METRICS');
export const SURFACES = Symbol('SURFACES');
export const TOKEN_COUNT_SERVICE = Symbol('TOKEN_COUNT_SERVICE');
export const MCP_SERVICE = Symbol('MCP_SERVICE');
