export * from './config.js';
export * from './encryption-key.js';
export * from './at-rest-file.js';
export { PiecesSealer } from './sealed-pieces.js';
