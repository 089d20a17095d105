/** The parts of OpenAI Chat Completions the engine reads or writes; every other field passes through. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [field: string]: unknown;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  [field: string]: unknown;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: unknown[];
  stream?: boolean;
  n?: number;
  functions?: unknown;
  [field: string]: unknown;
}

export interface ChatChoice {
  index: number;
  message?: ChatMessage;
  delta?: ChatDelta;
  finish_reason?: string | null;
  [field: string]: unknown;
}

export interface ChatDelta {
  role?: string;
  content?: string | null;
  tool_calls?: ChatToolCallDelta[];
  [field: string]: unknown;
}

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
  [field: string]: unknown;
}

export interface ChatCompletion {
  id?: string;
  choices: ChatChoice[];
  usage?: Record<string, unknown> | null;
  [field: string]: unknown;
}
