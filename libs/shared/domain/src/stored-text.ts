/**
 * Text as Engram stores it, so that every copy of it agrees: the write's answer, the database, the
 * event log, the flat files and the Tier 1 block.
 *
 * A JavaScript string can hold what UTF-8 cannot: a lone half of a surrogate pair (a client that cut
 * an emoji in two). Each copy used to encode it its own way (the log as `\ud800`, the database as
 * three U+FFFD, the flat files as one), so it becomes one U+FFFD here, as a UTF-8 encoder would make
 * it. Control characters other than tab and line feed (NUL, ESC and the rest of C0, DEL, C1) would
 * reach the model's context and the flat files raw: they become U+FFFD too, which keeps a trace that
 * something was there without joining the words around it. Line endings become `\n`.
 *
 * Replaced rather than refused: the text mostly comes from a model (its tool calls, markers,
 * extraction), which cannot be asked to send it again.
 */
export function storedText(text: string): string {
  return text.replace(LINE_ENDING, '\n').replace(CONTROL, REPLACEMENT).replace(LONE_SURROGATE, REPLACEMENT);
}

export const REPLACEMENT = '\ufffd';

const LINE_ENDING = /\r\n?/g;
// C0 except \t (09) and \n (0a), DEL, C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
