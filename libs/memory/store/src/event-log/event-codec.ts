import { type EncryptionKey, UnsealError } from '@engram/config';
import type { MemoryEvent } from '@engram/domain';

/**
 * An event as a store writes it: the envelope (seq, type, id, at, pool, actor, causationId,
 * schemaVersion) in the clear, so a store can index, order and check it without the key, and the
 * event's `data` (the part that holds what a person said) either as it is or sealed.
 */
export type StoredEvent = Omit<MemoryEvent, 'data'> & ({ readonly data: MemoryEvent['data'] } | { readonly sealed: string });

/**
 * The one seam between an event and the bytes a store keeps of it, shared by every store (the NDJSON
 * file log, the PostgreSQL table): what a store writes is `toStored(event)`, what it reads back goes
 * through `fromStored`. Without a key it is the identity; with one, `data` is sealed with AES-256-GCM
 * under the event's id, pool and seq as associated data, so a sealed body cannot be moved to another
 * event. Redaction, compaction, verify and replay read and write through the same codec.
 */
export interface EventCodec {
  /** Whether stored events are sealed (a key is configured). */
  readonly sealing: boolean;
  toStored(event: MemoryEvent): StoredEvent;
  /** Throws UnsealError (from @engram/config) when a sealed body does not open with this key. */
  fromStored(stored: StoredEvent): MemoryEvent;
}

/** No key: the stored event is the event. */
export const plainEventCodec: EventCodec = {
  sealing: false,
  toStored: (event) => event,
  fromStored: (stored) => {
    if ('sealed' in stored) throw new Error(`event ${stored.seq} is sealed and no encryption key is configured (ENGRAM_ENCRYPTION_KEY)`);
    return stored as MemoryEvent;
  },
};

/**
 * With a key: `sealed` is base64 of EncryptionKey.seal (nonce, ciphertext, tag) of the JSON of `data`,
 * a fresh nonce per event, with the event's id, pool and seq as associated data. An event stored with
 * its `data` in the clear is refused like a sealed one that does not open: in a sealed log, a clear
 * body is one nobody can vouch for.
 */
export function sealedEventCodec(key: EncryptionKey): EventCodec {
  return {
    sealing: true,
    // The envelope is copied field by field: object rest and spread cost more than a seal's own setup here.
    toStored(event) {
      const { type, id, at, pool, actor, causationId, schemaVersion, seq } = event;
      const sealed = key.seal(Buffer.from(JSON.stringify(event.data)), associatedData(event)).toString('base64');
      return { type, id, at, pool, actor, causationId, schemaVersion, sealed, seq };
    },
    fromStored(stored) {
      if (!('sealed' in stored)) throw new UnsealError(`event ${stored.seq} is not sealed, in a sealed log`);
      const { type, id, at, pool, actor, causationId, schemaVersion, seq } = stored;
      const data: unknown = JSON.parse(key.open(Buffer.from(stored.sealed, 'base64'), associatedData(stored)).toString('utf8'));
      return { type, id, at, pool, actor, causationId, schemaVersion, data, seq } as MemoryEvent;
    },
  };
}

/** The codec for a key, or none. */
export function eventCodecFor(key: EncryptionKey | null): EventCodec {
  return key ? sealedEventCodec(key) : plainEventCodec;
}

function associatedData(event: { readonly id: string; readonly pool: string; readonly seq: number }): string {
  return JSON.stringify([event.id, event.pool, event.seq]);
}
