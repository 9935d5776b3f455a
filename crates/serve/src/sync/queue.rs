//! The workers' job queue: bounded, multi-producer, multi-consumer, and
//! lock-free on the request path.
//!
//! crossbeam-channel, which this replaces, takes its internal waker mutex in
//! `try_send` to wake a sleeping receiver (the caveat `docs/serving-bound.md`
//! recorded against "the request thread acquires no lock"). Here the items
//! live in a lock-free array queue, sleeping receivers announce themselves
//! on a lock-free idle list, and a sender wakes one with a CAS and an
//! `unpark` — no lock on either side. Written by hand because the wake-up
//! protocol is the part that decides the handoff's cost and its
//! correctness, and it is checked by loom (`loom-tests/tests/job_queue.rs`).
//!
//! # Protocol (no lost wake-up)
//! - A receiver pops; if the queue is empty it may spin for a while
//!   ([`Receiver::spinning`], off by default), then announces itself: it
//!   pushes a `Sleeper` (its thread and a `woken` flag) onto the idle list,
//!   issues a `SeqCst` fence and looks at the queue (and the sender count)
//!   once more; only then does it park, until its `woken` flag is set.
//! - A sender pushes its item, issues a `SeqCst` fence, then pops sleepers
//!   until it wakes one (CAS `woken` false → true, then `unpark`) or the
//!   idle list is empty.
//! - The two fences order "announce, look" against "push, look for
//!   sleepers": at least one of the two looks sees the other side's write,
//!   so an item is never left queued while every receiver sleeps.
//! - A receiver whose second look succeeds sets its own flag, so a sender
//!   that pops that stale sleeper later fails the CAS and wakes the next
//!   one. A woken receiver loops: if another took the item, it sleeps again.
//! - The last sender to go announces it the same way (count to 0, fence,
//!   wake every sleeper); receivers then drain the queue and stop. A send
//!   with no receiver left fails as disconnected.
//!
//! Under loom the two containers are mutex-guarded stand-ins (crossbeam's
//! own correctness is crossbeam's to check); the protocol around them —
//! announcement, fences, flags, park and unpark — is this module's code in
//! both builds.

use super::thread::{self, Thread};
use super::{AtomicUsize, Ordering, Shared};

#[cfg(loom)]
use super::fault::{self, Fault};
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, fence};

/// Why a non-blocking send handed its item back.
#[derive(Debug, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// The queue holds its capacity.
    Full(T),
    /// Every receiver is gone.
    Disconnected(T),
}

/// Every sender is gone and the queue is empty.
#[derive(Debug, PartialEq, Eq)]
pub struct RecvError;

/// A receiver waiting for an item.
#[derive(Debug)]
struct Sleeper {
    thread: Thread,
    /// The CPU it went to sleep on (`None` where unknown).
    cpu: Option<usize>,
    /// Set (once) by the sender that wakes it, or by the receiver itself
    /// when its second look found an item.
    woken: AtomicBool,
}

impl Sleeper {
    /// Claims the sleeper: true for the one caller that set the flag.
    fn claim(&self) -> bool {
        self.woken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

#[derive(Debug)]
struct Channel<T> {
    items: Items<T>,
    idle: Idle,
    senders: AtomicUsize,
    receivers: AtomicUsize,
}

/// Most sleepers on the sender's CPU that `wake_one` sets aside.
const ASIDE: usize = 8;

impl<T> Channel<T> {
    /// Wakes one announced sleeper, dropping stale ones, and one that
    /// slept on the sender's own CPU only if no other is asleep: a worker
    /// pinned to the request thread's CPU preempts it the moment it wakes
    /// and holds the CPU for its whole retrieval, so the request's handoff
    /// and its resumption both take a service time (`pfm load` at 10,000
    /// facts/s with pinned workers: every handoff over 100 µs had one
    /// involuntary context switch, and h and `σ` p99 were 0.5-0.9 ms
    /// against 0.03 and 0.15 ms with this preference). crossbeam-channel
    /// hid this by accident: the woken worker blocked at once on the waker
    /// mutex the sender still held.
    ///
    /// Sleepers set aside (at most [`ASIDE`]) are pushed back after another
    /// is woken: a sender that looks for sleepers meanwhile may miss them,
    /// but the woken one looks at the queue again before it sleeps (the
    /// protocol's second look), so no item is stranded.
    fn wake_one(&self) {
        let here = current_cpu();
        let mut aside: [Option<Shared<Sleeper>>; ASIDE] = Default::default();
        let mut set_aside = 0;
        let mut woken = false;
        while let Some(sleeper) = self.idle.pop() {
            if sleeper.woken.load(Ordering::Acquire) {
                continue; // stale: its receiver withdrew
            }
            if here.is_some() && sleeper.cpu == here && set_aside < ASIDE {
                aside[set_aside] = Some(sleeper);
                set_aside += 1;
                continue;
            }
            if sleeper.claim() {
                sleeper.thread.unpark();
                woken = true;
                break;
            }
        }
        for sleeper in aside.into_iter().flatten() {
            if woken {
                self.idle.push(sleeper);
            } else if sleeper.claim() {
                sleeper.thread.unpark();
                woken = true;
            }
        }
    }

    /// Wakes every announced sleeper (the last sender left).
    fn wake_all(&self) {
        while let Some(sleeper) = self.idle.pop() {
            if sleeper.claim() {
                sleeper.thread.unpark();
            }
        }
    }
}

/// The sending half (cloneable; the requests' side).
#[derive(Debug)]
pub struct Sender<T>(Shared<Channel<T>>);

/// The receiving half (cloneable; the workers' side).
#[derive(Debug)]
pub struct Receiver<T> {
    channel: Shared<Channel<T>>,
    /// How long `recv` polls an empty queue before it sleeps.
    #[cfg(not(loom))]
    spin: std::time::Duration,
}

/// A queue holding at most `capacity` items (at least one).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let channel = Shared::new(Channel {
        items: Items::new(capacity.max(1)),
        idle: Idle::default(),
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
    });
    let receiver = Receiver {
        channel: channel.clone(),
        #[cfg(not(loom))]
        spin: std::time::Duration::ZERO,
    };
    (Sender(channel), receiver)
}

impl<T> Sender<T> {
    /// Enqueues without blocking and wakes a sleeping receiver, or hands
    /// the item back. Takes no lock.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        let channel = &*self.0;
        if channel.receivers.load(Ordering::Acquire) == 0 {
            return Err(TrySendError::Disconnected(item));
        }
        channel.items.push(item).map_err(TrySendError::Full)?;
        fence(Ordering::SeqCst);
        channel.wake_one();
        Ok(())
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.0.items.len()
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.senders.fetch_add(1, Ordering::Relaxed);
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.0.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            fence(Ordering::SeqCst);
            self.0.wake_all();
        }
    }
}

impl<T> Receiver<T> {
    /// This receiver, polling an empty queue for up to `spin` before it
    /// sleeps: a job that arrives meanwhile is taken without a wake-up (a
    /// futex call and, in a VM, an interrupt to the sleeper's CPU), at the
    /// cost of that CPU time. Zero (the default) sleeps at once. (Under
    /// loom, which has no clock, receivers never spin.)
    #[cfg_attr(loom, allow(unused_mut))]
    pub fn spinning(mut self, spin: std::time::Duration) -> Self {
        #[cfg(not(loom))]
        {
            self.spin = spin;
        }
        #[cfg(loom)]
        let _ = spin;
        self
    }

    /// Waits for an item; fails once every sender is gone and the queue
    /// is empty.
    pub fn recv(&self) -> Result<T, RecvError> {
        let channel = &*self.channel;
        loop {
            if let Some(item) = self.poll() {
                return Ok(item);
            }
            if channel.senders.load(Ordering::Acquire) == 0 {
                return channel.items.pop().ok_or(RecvError);
            }
            let me = Shared::new(Sleeper {
                thread: thread::current(),
                cpu: current_cpu(),
                woken: AtomicBool::new(false),
            });
            channel.idle.push(me.clone());
            fence(Ordering::SeqCst);
            #[cfg(loom)]
            let look_again = !fault::injected(Fault::SleepWithoutLooking);
            #[cfg(not(loom))]
            let look_again = true;
            if look_again
                && (!channel.items.is_empty() || channel.senders.load(Ordering::Acquire) == 0)
            {
                // Withdraw: a sender that pops this sleeper skips it. If one
                // already woke it, the unpark only shortens a later park.
                me.claim();
                continue;
            }
            while !me.woken.load(Ordering::Acquire) {
                thread::park();
            }
        }
    }

    /// Takes an item if one waits, without waiting.
    pub fn try_recv(&self) -> Option<T> {
        self.channel.items.pop()
    }

    /// One pop, or (with a spin) pops until an item comes, the spin ends or
    /// the last sender leaves (so a spinning worker stops with its queue).
    fn poll(&self) -> Option<T> {
        let channel = &*self.channel;
        #[cfg(not(loom))]
        if !self.spin.is_zero() {
            let started = std::time::Instant::now();
            loop {
                for _ in 0..64 {
                    if let Some(item) = channel.items.pop() {
                        return Some(item);
                    }
                    std::hint::spin_loop();
                }
                if started.elapsed() >= self.spin || channel.senders.load(Ordering::Acquire) == 0 {
                    return None;
                }
            }
        }
        channel.items.pop()
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.channel.items.len()
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.channel.receivers.fetch_add(1, Ordering::Relaxed);
        Receiver {
            channel: self.channel.clone(),
            #[cfg(not(loom))]
            spin: self.spin,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.channel.receivers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The CPU the calling thread runs on (a vDSO call on Linux).
#[cfg(all(target_os = "linux", not(loom)))]
fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads the CPU number.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// The CPU the calling thread runs on: unknown here. Under loom every
/// thread is on CPU 0, so the models also run `wake_one`'s set-aside path.
#[cfg(any(not(target_os = "linux"), loom))]
fn current_cpu() -> Option<usize> {
    cfg!(loom).then_some(0)
}

/// The items: crossbeam's lock-free bounded array queue.
#[cfg(not(loom))]
#[derive(Debug)]
struct Items<T>(crossbeam_queue::ArrayQueue<T>);

#[cfg(not(loom))]
impl<T> Items<T> {
    fn new(capacity: usize) -> Self {
        Items(crossbeam_queue::ArrayQueue::new(capacity))
    }
    fn push(&self, item: T) -> Result<(), T> {
        self.0.push(item)
    }
    fn pop(&self) -> Option<T> {
        self.0.pop()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The announced sleepers: crossbeam's lock-free unbounded queue.
#[cfg(not(loom))]
#[derive(Debug, Default)]
struct Idle(crossbeam_queue::SegQueue<Shared<Sleeper>>);

#[cfg(not(loom))]
impl Idle {
    fn push(&self, sleeper: Shared<Sleeper>) {
        self.0.push(sleeper);
    }
    fn pop(&self) -> Option<Shared<Sleeper>> {
        self.0.pop()
    }
}

/// The items under loom: a mutex-guarded stand-in with the same calls.
#[cfg(loom)]
#[derive(Debug)]
struct Items<T> {
    queue: loom::sync::Mutex<std::collections::VecDeque<T>>,
    capacity: usize,
}

#[cfg(loom)]
impl<T> Items<T> {
    fn new(capacity: usize) -> Self {
        Items {
            queue: loom::sync::Mutex::new(std::collections::VecDeque::new()),
            capacity,
        }
    }
    fn push(&self, item: T) -> Result<(), T> {
        let mut queue = self.queue.lock().unwrap();
        if queue.len() >= self.capacity {
            return Err(item);
        }
        queue.push_back(item);
        Ok(())
    }
    fn pop(&self) -> Option<T> {
        self.queue.lock().unwrap().pop_front()
    }
    fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The announced sleepers under loom (see [`Items`]).
#[cfg(loom)]
#[derive(Debug, Default)]
struct Idle(loom::sync::Mutex<std::collections::VecDeque<Shared<Sleeper>>>);

#[cfg(loom)]
impl Idle {
    fn push(&self, sleeper: Shared<Sleeper>) {
        self.0.lock().unwrap().push_back(sleeper);
    }
    fn pop(&self) -> Option<Shared<Sleeper>> {
        self.0.lock().unwrap().pop_front()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn items_reach_a_sleeping_receiver_and_the_last_sender_ends_it() {
        let (tx, rx) = bounded::<u32>(2);
        let worker = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Ok(item) = rx.recv() {
                got.push(item);
            }
            got
        });
        for i in 0..1000 {
            let mut item = i;
            loop {
                match tx.try_send(item) {
                    Ok(()) => break,
                    Err(TrySendError::Full(back)) => {
                        item = back;
                        std::thread::yield_now();
                    }
                    Err(TrySendError::Disconnected(_)) => panic!("the receiver is alive"),
                }
            }
            if i % 100 == 0 {
                // Let the receiver fall asleep on an empty queue.
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        drop(tx);
        assert_eq!(worker.join().unwrap(), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_queue_and_a_queue_without_receivers_hand_the_item_back() {
        let (tx, rx) = bounded::<u32>(1);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
        assert_eq!(rx.len(), 1);
        drop(rx);
        assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
    }

    #[test]
    fn a_spinning_receiver_takes_items_and_still_stops() {
        let (tx, rx) = bounded::<u32>(4);
        let rx = rx.spinning(std::time::Duration::from_micros(200));
        let worker = std::thread::spawn(move || std::iter::from_fn(|| rx.recv().ok()).count());
        for i in 0..100 {
            while tx.try_send(i).is_err() {
                std::thread::yield_now();
            }
        }
        drop(tx);
        assert_eq!(worker.join().unwrap(), 100);
    }

    #[test]
    fn a_long_spin_still_ends_when_the_last_sender_leaves() {
        let (tx, rx) = bounded::<u32>(1);
        let rx = rx.spinning(std::time::Duration::from_secs(3600));
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(rx.recv()).unwrap());
        drop(tx);
        assert_eq!(
            finished.recv_timeout(std::time::Duration::from_secs(30)),
            Ok(Err(RecvError)),
            "a spinning receiver kept polling a queue with no sender"
        );
    }
}
