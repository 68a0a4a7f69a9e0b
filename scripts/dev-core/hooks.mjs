// Module resolution hook (see register.mjs): a module of packages/core/dist/ resolves to the same module of
// packages/core/dist-dev/, whoever imports it (`@bobbin/core` from another package's build, or a path).
const published = new URL("../../packages/core/dist/", import.meta.url).href;
const development = new URL("../../packages/core/dist-dev/", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(published)) return resolved;
  return { ...resolved, url: development + resolved.url.slice(published.length) };
}
