// A lock kept in memcached, in Go with gomemcache, for `mcsim test`: MCSIM_CLIENTS
// goroutines each take the lock `lock_x` twice, work inside the section `section`, and
// release it. mcsim judges the exclusion from what each says it entered and left.
//
// `get-set` checks with Get and takes with Set: two goroutines can both find the key
// missing and both take it. `add` takes it with Add, which only one of them can win.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$PWD/helpers/go go build -o target/go-lock ./examples/go-lock
//	mcsim test --clients 3 -- target/go-lock get-set   # FAILED: exclusion of section broken
//	mcsim test --clients 3 -- target/go-lock add       # passed
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"mcsimcontrol"
)

// A lock on one key: Acquire tries once.
type lock interface {
	Acquire() (bool, error)
	Release() error
}

// getSetLock checks that the key is missing, then sets it: not atomic.
type getSetLock struct {
	mc    *memcache.Client
	key   string
	owner string
}

func (l getSetLock) Acquire() (bool, error) {
	_, err := l.mc.Get(l.key)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, memcache.ErrCacheMiss) {
		return false, err
	}
	return true, l.mc.Set(&memcache.Item{Key: l.key, Value: []byte(l.owner), Expiration: 5})
}

func (l getSetLock) Release() error { return l.mc.Delete(l.key) }

// addLock takes the key with Add: memcached stores it for one caller only.
type addLock struct {
	mc    *memcache.Client
	key   string
	owner string
}

func (l addLock) Acquire() (bool, error) {
	err := l.mc.Add(&memcache.Item{Key: l.key, Value: []byte(l.owner), Expiration: 5})
	if errors.Is(err, memcache.ErrNotStored) {
		return false, nil
	}
	return err == nil, err
}

func (l addLock) Release() error { return l.mc.Delete(l.key) }

func worker(kind string) func(i int) error {
	return func(i int) error {
		me, err := mcsimcontrol.NewParticipant(fmt.Sprintf("t%d", i))
		if err != nil {
			return err
		}
		defer me.Close()
		mc := memcache.New(mcsimcontrol.Servers()...)
		// mcsim holds each command until its turn: more than gomemcache's 100 ms.
		mc.Timeout = 30 * time.Second
		if _, err := mc.Get(me.NameKey); !errors.Is(err, memcache.ErrCacheMiss) {
			return fmt.Errorf("naming the connection: %v", err)
		}
		name := me.Name
		var l lock = addLock{mc, "lock_x", name}
		if kind == "get-set" {
			l = getSetLock{mc, "lock_x", name}
		}
		for round := 0; round < 2; round++ {
			for {
				ok, err := l.Acquire()
				if err != nil {
					return err
				}
				if ok {
					break
				}
				if err := me.Sleep(5 * time.Millisecond); err != nil {
					return err
				}
			}
			if err := me.Enter("section"); err != nil {
				return err
			}
			if err := mc.Set(&memcache.Item{Key: "work", Value: []byte(name)}); err != nil {
				return err
			}
			if err := me.Leave("section"); err != nil {
				return err
			}
			if err := l.Release(); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
				return err
			}
		}
		return nil
	}
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "get-set" && os.Args[1] != "add") {
		fmt.Fprintln(os.Stderr, "usage: go-lock get-set|add")
		os.Exit(2)
	}
	mcsimcontrol.RunParticipants(mcsimcontrol.Clients(), worker(os.Args[1]))
}
