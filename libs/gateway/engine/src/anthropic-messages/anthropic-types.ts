/** The parts of Anthropic Messages the engine reads or writes; every other field passes through. */
export interface AnthropicBlock {
  type: string;
  [field: string]: unknown;
}

export interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
  [field: string]: unknown;
}

export interface AnthropicRequest {
  messages: AnthropicMessage[];
  system?: string | AnthropicBlock[];
  tools?: unknown[];
  stream?: boolean;
  [field: string]: unknown;
}

export interface AnthropicResponse {
  id?: string;
  type?: string;
  content?: AnthropicBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: Record<string, unknown>;
  [field: string]: unknown;
}
