/** The parts of the OpenAI Responses API the engine reads or writes; every other field passes through. */
export interface ResponsesItem {
  type?: string;
  [field: string]: unknown;
}

export interface ResponsesRequest {
  input?: string | ResponsesItem[];
  instructions?: string | null;
  tools?: unknown[];
  stream?: boolean;
  store?: boolean;
  background?: boolean;
  previous_response_id?: string | null;
  [field: string]: unknown;
}

export interface ResponsesResponse {
  id?: string;
  status?: string;
  output?: ResponsesItem[];
  usage?: Record<string, unknown> | null;
  [field: string]: unknown;
}

/** A round's output as `ModelTurn.raw`: the items, and the id of the response that holds them upstream. */
export interface ResponsesRound {
  readonly responseId: string | undefined;
  readonly items: readonly ResponsesItem[];
}
