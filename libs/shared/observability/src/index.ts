export * from './logger.js';
export * from './nest-logger.js';
export * from './redis-connection.js';
export * from './process-lifecycle.js';
export * from './memory-replica-log.js';
