import { clientError } from './errors.js';

/**
 * Deepest nesting of arrays and objects a request body may have. Real requests stay far below
 * (messages, content blocks and tool schemas nest a few dozen levels at most); a deeper body
 * would exhaust the stack of JSON.stringify and structuredClone long before it reached upstream.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * A client's JSON body, parsed once, refused with a 400 before any work when it is not JSON or
 * nests deeper than `maxDepth`. An empty body is `emptyAs` when given, else a 400.
 */
export function parseJsonBody(raw: unknown, options: { readonly emptyAs?: unknown; readonly maxDepth?: number } = {}): unknown {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
  if (bytes.length === 0) {
    if ('emptyAs' in options) return options.emptyAs;
    throw clientError(400, 'the request body must be JSON', 'invalid_json');
  }
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  if (nestsDeeperThan(bytes, maxDepth)) {
    throw clientError(400, `the request body nests arrays and objects deeper than ${maxDepth} levels`, 'json_too_deep');
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw clientError(400, 'the request body is not valid JSON', 'invalid_json');
  }
}

/** Counts bracket depth outside strings, without parsing (so without recursion of its own). */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = closingQuote(bytes, i + 1);
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote that ends the string starting at `from` (a native search: strings are most of a body). */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let at = from; ;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return bytes.length;
    let backslashes = 0;
    for (let j = quote - 1; j >= from && bytes[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}
