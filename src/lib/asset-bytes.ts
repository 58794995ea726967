// A static asset's bytes through the Worker's ASSETS binding, for the tables an isolate loads once (the token table,
// the embedding table): a missing one is an error that says which file and how it is made.

/** What the asset loaders need of the static-assets binding (`env.ASSETS`, a `Fetcher`, is one). */
export interface AssetsBinding {
  fetch(url: string): Promise<Response>;
}

/** The bytes at `url`; `what` names the table and `remedy` says how its file is made when the binding has none. */
export async function assetBytes(assets: AssetsBinding, url: string, what: string, remedy: string): Promise<ArrayBuffer> {
  const response = await assets.fetch(url);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${what} missing: the ASSETS binding answered ${response.status} for ${new URL(url).pathname} (${remedy})`);
  }
  return response.arrayBuffer();
}
