// Package mcsimcontrol is what a Go program under `mcsim test` may tell mcsim, beside its
// memcached commands: which connections are a participant's, the sections it enters, the
// virtual time it waits, and a failure.
//
//	mcsimcontrol.RunParticipants(mcsimcontrol.Clients(), func(i int) error {
//		me, err := mcsimcontrol.NewParticipant(fmt.Sprintf("t%d", i))
//		if err != nil {
//			return err
//		}
//		defer me.Close()
//		mc := memcache.New(mcsimcontrol.Servers()...) // gomemcache, or any client
//		mc.Timeout = 10 * time.Second                  // mcsim holds commands in turn
//		mc.Get(me.NameKey)                             // takes this client's connection into the schedule
//		me.Enter("section")                            // mcsim fails the run if another is inside
//		me.Sleep(500 * time.Millisecond)               // half a second of the servers' virtual time
//		me.Leave("section")
//		return nil
//	})
//
// Each participant talks to mcsim on a connection of its own, one line at a time, and
// mcsim answers at once, so what it is told keeps the participant's own order. Outside
// `mcsim test` (no MCSIM_EXECUTION: the same program against a real memcached at
// MCSIM_SERVERS, 127.0.0.1:11211 by default) it says nothing and sleeps in real time.
package mcsimcontrol

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Under is true when the program runs under `mcsim test`.
func Under() bool {
	_, ok := os.LookupEnv("MCSIM_EXECUTION")
	return ok
}

// Servers gives the simulated servers of this run (MCSIM_SERVERS), the first first, as
// host:port.
func Servers() []string {
	list := os.Getenv("MCSIM_SERVERS")
	if list == "" {
		list = "127.0.0.1:11211"
	}
	return strings.Split(list, ",")
}

// Clients is how many participants the run waits for (MCSIM_CLIENTS).
func Clients() int {
	n, err := strconv.Atoi(os.Getenv("MCSIM_CLIENTS"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// line is a connection to mcsim for control lines, answered one at a time.
type line struct {
	conn    net.Conn
	replies *bufio.Reader
}

func dial() (*line, error) {
	conn, err := net.Dial("tcp", Servers()[0])
	if err != nil {
		return nil, fmt.Errorf("mcsim: cannot reach %s: %w", Servers()[0], err)
	}
	return &line{conn: conn, replies: bufio.NewReader(conn)}, nil
}

func (l *line) say(text string) (string, error) {
	if _, err := fmt.Fprintf(l.conn, "mcsim %s\r\n", text); err != nil {
		return "", fmt.Errorf("mcsim %s: %w", text, err)
	}
	reply, err := l.replies.ReadString('\n')
	reply = strings.TrimSpace(reply)
	if err != nil || !strings.HasPrefix(reply, "OK") {
		if reply == "" {
			reply = "the connection closed"
		}
		return "", fmt.Errorf("mcsim %s: %s", text, reply)
	}
	return reply, nil
}

// Fail makes the run fail with message (the program may go on).
func Fail(message string) {
	if !Under() {
		return
	}
	l, err := dial()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer l.conn.Close()
	if _, err := l.say("fail " + strings.Join(strings.Fields(message), " ")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Participant is one participant's link to mcsim.
type Participant struct {
	// Name is the participant's name, one word.
	Name string
	// NameKey is the key whose read, in any form, names a client's connection Name:
	// read it on each connection the participant's client opens (one to each server).
	NameKey string
	line    *line
	began   time.Time
}

// NewParticipant links participant name to mcsim.
func NewParticipant(name string) (*Participant, error) {
	if name == "" || len(name) > 200 || strings.ContainsAny(name, " \t\r\n") {
		return nil, fmt.Errorf("a participant's name is one word (no spaces): %q", name)
	}
	p := &Participant{Name: name, NameKey: "mcsim:name:" + name, began: time.Now()}
	if Under() {
		l, err := dial()
		if err != nil {
			return nil, err
		}
		p.line = l
	}
	return p, nil
}

func (p *Participant) say(text string) (string, error) {
	if p.line == nil {
		return "OK", nil
	}
	return p.line.say(text)
}

// Enter says the participant entered section: another participant inside fails the run.
func (p *Participant) Enter(section string) error {
	_, err := p.say("enter " + section + " " + p.Name)
	return err
}

// Leave says the participant left section.
func (p *Participant) Leave(section string) error {
	_, err := p.say("leave " + section + " " + p.Name)
	return err
}

// Sleep waits d of the servers' virtual time (real time outside mcsim): under `mcsim
// test` the time passes when every participant waits, and costs nothing.
func (p *Participant) Sleep(d time.Duration) error {
	if p.line == nil {
		time.Sleep(d)
		return nil
	}
	_, err := p.say(fmt.Sprintf("sleep %d %s", d.Milliseconds(), p.Name))
	return err
}

// Now is the time since the execution began: on the servers' virtual clock under `mcsim
// test`, on a monotonic clock outside it.
func (p *Participant) Now() (time.Duration, error) {
	if p.line == nil {
		return time.Since(p.began), nil
	}
	reply, err := p.say("time")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(reply)
	if len(fields) < 2 {
		return 0, fmt.Errorf("mcsim time: %q", reply)
	}
	s, err := strconv.ParseFloat(fields[1], 64)
	return time.Duration(s * float64(time.Second)), err
}

// Fail makes the run fail with message (the program may go on).
func (p *Participant) Fail(message string) error {
	_, err := p.say("fail " + strings.Join(strings.Fields(message), " "))
	return err
}

// Metric is a figure of the run, summed up over runs (min, mean, max).
func (p *Participant) Metric(name string, value float64) error {
	_, err := p.say(fmt.Sprintf("metric %s %g", name, value))
	return err
}

// Sometimes says the danger name happened in this run.
func (p *Participant) Sometimes(name string) error {
	_, err := p.say("sometimes " + name)
	return err
}

// Close says the participant is done: mcsim no longer waits for its commands. Closed
// again, nothing happens.
func (p *Participant) Close() error {
	if p.line == nil {
		return nil
	}
	_, err := p.line.say("done " + p.Name)
	p.line.conn.Close()
	p.line = nil
	return err
}

// RunParticipants runs worker(i) on a goroutine of its own for each participant i < n
// and waits for all. A worker's error or panic fails the run, named with its number.
func RunParticipants(n int, worker func(i int) error) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					Fail(fmt.Sprintf("participant %d panicked: %v", i, r))
				}
			}()
			if err := worker(i); err != nil {
				fmt.Fprintf(os.Stderr, "participant %d: %v\n", i, err)
				Fail(fmt.Sprintf("participant %d: %v", i, err))
			}
		}(i)
	}
	wg.Wait()
}
