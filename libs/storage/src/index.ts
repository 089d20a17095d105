export { openMemoryService, type MemoryServiceOptions } from './open-memory-service.js';
export { MemoryService, type MemoryServiceDeps } from './memory-service.js';
export { EventLog, EventLogCorruptError, type EventLogOptions } from './event-log.js';
export { Projection } from './projection.js';
export { DataDir } from './data-dir.js';
export { DataDirLock, DataDirLockedError } from './data-dir-lock.js';
export { FlatFiles } from './flat-files.js';
export { parseFlatFile, renderFlatFile, type FlatEntry } from './flat-file-format.js';
