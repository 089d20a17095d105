/** Largest request body accepted (base64 images fit); larger is a 413. */
export const BODY_LIMIT_BYTES = 32 * 1024 * 1024;
