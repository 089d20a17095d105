#!/usr/bin/env node
// `npx engram`: runs the built CLI (npm run build first). `engram mcp`, the stdio bridge to a gateway,
// is the gateway's command (apps/gateway/src/cli.ts); the others are the memory service's (src/cli.ts).
await import(process.argv[2] === 'mcp' ? '../../gateway/dist/cli.js' : '../dist/cli.js');
