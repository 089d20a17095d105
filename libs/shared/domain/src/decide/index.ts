export * from './write-command.js';
export * from './decide-store.js';
export * from './decide-update.js';
export * from './decide-archive.js';
export * from './decide-purge.js';
export * from './decide-refresh.js';
export * from './decide-consolidate.js';
export * from './decide-decay-sweep.js';
