import { clientError } from './errors.js';

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The path (and query) a pass-through request is forwarded to, `/v1/...`: its request target
 * without the pool prefix. The target is refused with a 400 unless it stays under `/v1/`: no
 * `.` or `..` segment, plain or percent-encoded, and no encoded slash or backslash (which some
 * servers take for a separator). An absolute-form target (`GET http://host/v1/models`) is
 * resolved to its path; the authority in it is ignored, the upstream stays the configured one.
 */
export function passthroughPath(target: string, pool: string | undefined): string {
  const originForm = target.startsWith('/') ? target : resolveAbsoluteForm(target);
  const queryAt = originForm.indexOf('?');
  const path = queryAt === -1 ? originForm : originForm.slice(0, queryAt);
  const query = queryAt === -1 ? '' : originForm.slice(queryAt);
  const prefix = pool === undefined ? '' : `/pools/${pool}`;
  if (!path.startsWith(`${prefix}/v1/`)) throw outsideV1();
  const forwarded = path.slice(prefix.length);
  for (const segment of forwarded.split('/')) {
    if (!isPlainSegment(segment)) throw outsideV1();
  }
  return forwarded + query;
}

function resolveAbsoluteForm(target: string): string {
  const authority = ABSOLUTE_FORM.exec(target);
  if (!authority) throw outsideV1();
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function isPlainSegment(segment: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return false;
  }
  return decoded !== '.' && decoded !== '..' && !decoded.includes('/') && !decoded.includes('\\');
}

function outsideV1() {
  return clientError(400, "the request path must stay under /v1/ (no '.' or '..' segments, no encoded slashes)", 'invalid_path');
}
