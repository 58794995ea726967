// Pure: a unit vector kept in a quarter of its float32 bytes: each component in int8 steps of the vector's largest
// one (which is ±127 steps). Only the direction is kept (no scale): read back, the steps are normalised, and its
// cosines with other vectors move by well under a hundredth, far less than the differences a search ranks by.
import { unitVector } from "./embedder.ts";

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
export const fromInt8 = (steps: Int8Array): Float32Array => unitVector(steps);
