// Pure: a unit vector kept in a quarter of its float32 bytes: each component in int8 steps of the vector's largest
// one (which is ±127 steps). Only the direction is kept (no scale): read back, the steps are normalised, and its
// cosines with other vectors move by well under a hundredth, far less than the differences a search ranks by.

export function toInt8(vector: Float32Array): Int8Array {
  let largest = 0;
  for (const v of vector) largest = Math.max(largest, Math.abs(v));
  const steps = new Int8Array(vector.length);
  if (largest === 0) return steps;
  const step = largest / 127;
  for (let d = 0; d < vector.length; d++) steps[d] = Math.round(vector[d]! / step);
  return steps;
}

/** The unit vector the steps stand for (all zero stays the zero vector: similar to nothing). */
export function fromInt8(steps: Int8Array): Float32Array {
  let norm = 0;
  for (const v of steps) norm += v * v;
  const vector = new Float32Array(steps.length);
  if (norm === 0) return vector;
  const inverse = 1 / Math.sqrt(norm);
  for (let d = 0; d < steps.length; d++) vector[d] = steps[d]! * inverse;
  return vector;
}
