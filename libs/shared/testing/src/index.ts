export * from './because.js';
export * from './eventually.js';
export * from './factories.js';
export * from './recording-logger.js';
export * from './temp-data-dir.js';
export * from './clustered-vectors.js';
export * from './sentence-encoder/index.js';
export * from './tree-digest.js';
