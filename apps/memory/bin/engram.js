#!/usr/bin/env node
// `npx engram`: runs the built CLI (npm run build first).
await import('../dist/cli.js');
