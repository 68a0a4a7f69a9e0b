/**
 * The chat room: who is here, under which name, and the broadcast that
 * carries every line to every member.
 *
 * A slow member never holds up the others: publishing on `@bobbin/sync`'s
 * `Broadcast` never waits, and each member's inbox keeps at most `queue`
 * lines; when a member's inbox is full, its oldest line is dropped, and the
 * member is told how many it lost before the next line it gets.
 */
import { Broadcast, Channel, type Subscription } from "@bobbin/sync";

/** A line of the room: said by a member, or a notice about one. */
export interface Line {
  /** Who said it, or whom the notice is about: they do not get it back. */
  readonly from: Member;
  /** The text, without its newline: `name: text`, or `* notice`. */
  readonly text: string;
}

/** One member of the room, for as long as its client is connected. */
export class Member {
  constructor(
    /** A number no other member of the room had. */
    readonly id: number,
    /** `guest<id>` until the client chooses one with `/nick`. */
    public name: string,
    /** The room's lines, but its own. */
    readonly inbox: Subscription<Line>,
    /** Answers to its commands, for it alone; they come before the room's lines. */
    readonly replies: Channel<string>,
  ) {}
}

/** What makes a name: letters, digits, `_` and `-`, 1 to 20 of them. */
const NAME = /^[A-Za-z0-9_-]{1,20}$/;

/**
 * The room: members join, speak, rename themselves and leave; every line goes
 * to every other member.
 *
 * @example
 * ```ts
 * const room = new Room(64);
 * const me = room.join();
 * room.say(me, "hello");   // the others get "guest1: hello"
 * room.leave(me);          // and "* guest1 left"
 * ```
 * @throws RangeError when `queue` is not an integer ≥ 1.
 */
export class Room {
  private readonly broadcast: Broadcast<Line>;
  private readonly members = new Set<Member>();
  private lastId = 0;
  /** Lines said (each counted once, however many members got it). */
  said = 0;
  /** Members that joined since the room opened. */
  joined = 0;
  /** Members told that the relay shuts down. */
  told = 0;

  constructor(
    /** How many lines a member's inbox keeps before its oldest is dropped. */
    readonly queue: number,
  ) {
    if (!Number.isInteger(queue) || queue < 1)
      throw new RangeError(`Room(queue): queue must be an integer ≥ 1 (lines per member), got ${queue}`);
    this.broadcast = new Broadcast<Line>(queue);
  }

  /** How many members are here. */
  get size(): number {
    return this.members.size;
  }

  /** The members' names, in the order they joined. */
  get names(): string[] {
    return [...this.members].map((m) => m.name);
  }

  /**
   * A new member, named `guest<id>`; the others are told it joined.
   *
   * @example
   * ```ts
   * const me = room.join();
   * ```
   * @throws ChannelClosed once the room is closed.
   */
  join(): Member {
    const id = ++this.lastId;
    const member = new Member(id, `guest${id}`, this.broadcast.subscribe(), new Channel<string>(this.queue));
    this.broadcast.publish({ from: member, text: `* ${member.name} joined` });
    this.members.add(member);
    this.joined++;
    return member;
  }

  /**
   * `member` says `text`: the others get `name: text`.
   *
   * @example
   * ```ts
   * room.say(me, "hello");
   * ```
   * @throws ChannelClosed once the room is closed.
   */
  say(member: Member, text: string): void {
    this.broadcast.publish({ from: member, text: `${member.name}: ${text}` });
    this.said++;
  }

  /**
   * Renames `member`; the others are told. Returns why not, or null when it did.
   *
   * @example
   * ```ts
   * const refused = room.rename(me, "alice");
   * if (refused !== null) yield* me.replies.send(`* ${refused}`);
   * ```
   * @throws ChannelClosed once the room is closed.
   */
  rename(member: Member, name: string): string | null {
    if (!NAME.test(name)) return `a name is 1 to 20 letters, digits, _ or -: ${JSON.stringify(name)} is not one`;
    if (name === member.name) return null;
    for (const m of this.members) if (m.name === name) return `${name} is taken`;
    this.broadcast.publish({ from: member, text: `* ${member.name} is now ${name}` });
    member.name = name;
    return null;
  }

  /**
   * `member` leaves: its inbox and replies close, and the others are told
   * (unless the room is closed). Leaving twice does nothing.
   *
   * @example
   * ```ts
   * try { … } finally { room.leave(me); }
   * ```
   */
  leave(member: Member): void {
    if (!this.members.delete(member)) return;
    member.inbox.close();
    member.replies.close();
    if (!this.broadcast.isClosed) this.broadcast.publish({ from: member, text: `* ${member.name} left` });
  }

  /**
   * Closes the room: every member's inbox ends once read, and nobody can join.
   *
   * @example
   * ```ts
   * try { yield* serve(server, room); } finally { room.close(); }
   * ```
   */
  close(): void {
    this.broadcast.close();
  }
}
