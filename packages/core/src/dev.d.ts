/** Whether the kernel checks its invariants: a build-time constant (see kernel/assert.ts). */
declare const __BOBBIN_DEV__: boolean;
