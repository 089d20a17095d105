import type { Logger } from 'pino';

/** One line when a memory replica goes down (its calls move to another) and one when it answers again. */
export function logReplicaChange(logger: Logger): (change: { readonly address: string; readonly state: 'up' | 'down'; readonly error?: string }) => void {
  return ({ address, state, error }) => {
    if (state === 'down') logger.warn({ replica: address, err: error }, 'memory replica unreachable: its calls go to the other replicas until it answers');
    else logger.info({ replica: address }, 'memory replica answers again');
  };
}
