// The part of node:async_hooks the Worker uses (workerd serves it under nodejs_compat; the src project has no Node
// types, so that nothing else of Node is assumed).
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, fn: () => R): R;
    exit<R>(fn: () => R): R;
  }
}
