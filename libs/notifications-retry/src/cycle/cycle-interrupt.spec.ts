import { CycleInterrupt } from './cycle-interrupt';

describe('CycleInterrupt', () => {
  it('tells every subscriber once, with the first reason kept', () => {
    const interrupt = new CycleInterrupt();
    const heard: string[] = [];
    interrupt.subscribe(() => heard.push('a'));
    interrupt.subscribe(() => heard.push('b'));
    interrupt.abort('lease lost');
    interrupt.abort('shutdown');
    expect(heard).toEqual(['a', 'b']);
    expect(interrupt.aborted).toBe(true);
    expect(interrupt.reason).toBe('lease lost');
  });

  it('does not tell a subscriber that unsubscribed', () => {
    const interrupt = new CycleInterrupt();
    const heard: string[] = [];
    const unsubscribe = interrupt.subscribe(() => heard.push('gone'));
    interrupt.subscribe(() => heard.push('kept'));
    unsubscribe();
    interrupt.abort(new Error('grace over'));
    expect(heard).toEqual(['kept']);
  });
});
