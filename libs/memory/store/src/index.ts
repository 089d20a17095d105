export { openMemoryService, type MemoryServiceOptions } from './data-dir/open-memory-service.js';
export { MemoryService, type MemoryServiceDeps } from './writes/memory-service.js';
export { CommitFeed, type CommitReader } from './writes/commit-feed.js';
export { AUTO_COMPACT, EventLog, EventLogCorruptError, type EventLogOptions, type LogCompaction } from './event-log/event-log.js';
export type { EventStore } from './event-log/event-store.js';
export { eventCodecFor, plainEventCodec, sealedEventCodec, type EventCodec, type StoredEvent } from './event-log/event-codec.js';
export { DataDir } from './data-dir/data-dir.js';
export { DataDirLock, DataDirLockedError } from './data-dir/data-dir-lock.js';
export { FlatFiles } from './flat-files/flat-files.js';
export { parseFlatFile, renderFlatFile, type FlatEntry } from './flat-files/flat-file-format.js';
export { backupDataDir, checkLogCopy, MANIFEST_FILE, type BackupManifest } from './data-dir/backup.js';
export { restoreDataDir, type RestoreReport } from './data-dir/restore.js';
export { compactDataDir, replayDataDir, verifyDataDir, type CompactResult, type ReplayResult, type VerifyResult } from './data-dir/rebuild.js';
export { importFlatFiles, type ImportFlatResult } from './data-dir/import-flat.js';
export { ReadOnlyDataDir } from './data-dir/read-only-data-dir.js';
export { convertDataDir, type Conversion, type ConversionResult } from './data-dir/data-dir-conversion.js';
export { EncryptionKeyError, eventCodecOf } from './data-dir/data-dir-encryption.js';
export type { PoolStats } from './projection/pool-stats.js';
export { HybridSearch, type HybridOutcome, type SearchObserver } from './vectors/hybrid-search.js';
export { VectorStore } from './vectors/vector-store.js';
export { VectorService } from './vectors/vector-service.js';
export { contentHash } from './vectors/content-hash.js';
export { ExtractionSpool, type SpooledExchange } from './writes/extraction-spool.js';
export {
  checkEventStoreTable,
  copyLogToTable,
  copyTableToDataDir,
  copyTableToLog,
  type LogCopyResult,
  type LogToTableResult,
  type TableCheck,
} from './data-dir/event-store-tools.js';
export { PostgresEventStore } from './event-log/postgres/postgres-event-store.js';
