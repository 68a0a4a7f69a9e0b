/**
 * Chapter 3, "A simple scheduler": `node dist/ch03-toy-scheduler.js`.
 *
 * First the book's two jumps (an exception, an effect: here a `yield`), then
 * the toy scheduler: "Hello" before "World" (the spawned task runs in the
 * background), and a spawned task's result coming back through its promise.
 */
import { exceptionJump, handleEffects, helloWorld, myProgram, primes } from "./ch03/programs.js";

console.log("# an exception jumps out and never comes back");
exceptionJump();
console.log("# an effect (a yield) jumps to its handler, which comes back");
handleEffects(myProgram);
console.log("# spawn fn; print Hello; await fn");
helloWorld();
console.log("# two computations spawned, their promises awaited");
console.log(`sum of the 100th and the 1000th primes = ${primes(100, 1000)}`);
