/** A pool is one memory space. Its name is validated here and nowhere else: it is never a path. */
export const POOL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const DEFAULT_POOL = 'default';

export function isValidPoolName(name: unknown): name is string {
  return typeof name === 'string' && POOL_NAME_PATTERN.test(name) && name !== '.' && name !== '..';
}
