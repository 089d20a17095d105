/**
 * A write decided on a pool's version that another memory replica moved on meanwhile: nothing was
 * stored, this replica has caught up, and the command is decided again (see decidingAgain).
 */
export class VersionConflict extends Error {
  override name = 'VersionConflict';
  constructor(readonly pools: readonly string[]) {
    super(`another memory replica wrote to ${pools.join(', ')} since this write was decided`);
  }
}
