export * from './memory-pattern.js';
export * from './memory-messages.js';
export * from './memory-error.js';
export * from './memory-client.js';
export * from './memory-channel.js';
export * from './internal-token.js';
export * from './operator-access.js';
