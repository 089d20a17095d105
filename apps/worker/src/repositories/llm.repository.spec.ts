import { loadConfig } from '@engram/config';
import { describe, expect, it } from '@jest/globals';
import { createLlm, OpenAiLlmRepository } from './llm.repository.js';

describe('createLlm', () => {
  it('uses no model when CONSOLIDATION_MODEL is off', () => {
    expect(createLlm(loadConfig({ CONSOLIDATION_MODEL: 'off', UPSTREAM_API_KEY: 'sk-x' }))).toBeNull();
  });

  it('uses no model for OpenAI itself without a key (the worker has no client bearer to forward)', () => {
    expect(createLlm(loadConfig({}))).toBeNull();
  });

  it('calls a configured upstream, with or without a key', () => {
    expect(createLlm(loadConfig({ UPSTREAM_API_KEY: 'sk-x' }))).toBeInstanceOf(OpenAiLlmRepository);
    expect(createLlm(loadConfig({ UPSTREAM_BASE_URL: 'http://127.0.0.1:11434/v1' }))).toBeInstanceOf(OpenAiLlmRepository);
  });
});
