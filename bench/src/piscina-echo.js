// The piscina side of the `call` round-trip benchmark (bench/src/domains.js):
// a task that returns its argument, as Bobbin's `echo` in domains-tasks.js.
export default function echo(x) {
  return x;
}
