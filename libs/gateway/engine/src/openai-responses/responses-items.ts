import { objectParts } from '../request-shape.js';
import type { ToolCall } from '../turn.js';
import type { ResponsesItem, ResponsesResponse } from './responses-types.js';

/** The text of an output message's `output_text` parts. */
export function messageText(item: ResponsesItem): string {
  return objectParts<ResponsesItem>(item['content']).map((part) => (part.type === 'output_text' ? String(part['text'] ?? '') : '')).join('');
}

/**
 * Output items as they go back into `input` for the next round. With `store: false` the API
 * keeps nothing, so an item id would point at nothing ("Items are not persisted when store is
 * false"): ids are left out then, the way Codex sends its history.
 */
export function asInputItems(items: readonly ResponsesItem[], store: boolean | undefined): ResponsesItem[] {
  if (store !== false) return [...items];
  return items.map((item) => {
    const { id: _id, ...rest } = item;
    return rest;
  });
}

/** A response echoes the request's tools: the client sees its own only. */
export function withoutMemoryTools(response: ResponsesResponse, isMemoryTool: (name: string) => boolean): ResponsesResponse {
  const echoed = response['tools'];
  if (!Array.isArray(echoed)) return response;
  const tools = (echoed as ResponsesItem[]).filter((tool) => !(tool.type === 'function' && isMemoryTool(String(tool['name']))));
  return tools.length === echoed.length ? response : { ...response, tools };
}

/**
 * The tool call an output item asks the client (or Engram) to run: every item with a `call_id`
 * (function_call, custom_tool_call such as Codex's apply_patch, local_shell_call, computer_call).
 * Server-side tools (web_search_call, ...) carry none. Only a function_call can be a memory call.
 */
export function toolCallOf(item: ResponsesItem, streamedArguments = ''): ToolCall | null {
  if (typeof item['call_id'] !== 'string') return null;
  const name = typeof item['name'] === 'string' ? item['name'] : String(item.type);
  if (item.type !== 'function_call') return { id: item['call_id'], name, arguments: JSON.stringify(item['input'] ?? item['action'] ?? null) };
  const given = item['arguments'];
  return { id: item['call_id'], name, arguments: typeof given === 'string' && given !== '' ? given : streamedArguments };
}
