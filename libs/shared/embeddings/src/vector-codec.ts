/** A vector as SQLite and sqlite-vec store it: little-endian float32, 4 bytes per dimension. */
export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A vector as it travels over the memory RPC: the same bytes, base64. */
export function vectorToBase64(vector: Float32Array): string {
  return vectorToBlob(vector).toString('base64');
}

/** Throws on anything that is not a whole number of float32s or holds a non-finite value. */
export function vectorFromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) throw new Error('a vector must be a non-empty run of float32s');
  const vector = new Float32Array(bytes.length / 4);
  for (let index = 0; index < vector.length; index++) {
    const value = bytes.readFloatLE(index * 4);
    if (!Number.isFinite(value)) throw new Error('a vector holds a value that is not a finite number');
    vector[index] = value;
  }
  return vector;
}
