export * from './config.js';
export * from './encryption-key.js';
