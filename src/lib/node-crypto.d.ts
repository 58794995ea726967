// The part of node:crypto the Worker uses (workerd serves it under nodejs_compat; the src project has no Node types,
// so that nothing else of Node is assumed): a hash made at once, where awaiting crypto.subtle per text costs more
// than the hashing (src/catalog/cached-embedder.ts).
declare module "node:crypto" {
  interface Hash {
    update(data: string, encoding: "utf8"): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: "sha256"): Hash;
}
