export * from './because.js';
export * from './eventually.js';
