// Package e2e runs the chapters against a real kube-apiserver and etcd on
// loopback, started by hack/local-cluster.sh.
//
// The tests are behind the "e2e" build tag, so `go test ./...` needs no
// cluster; hack/test.sh (the project's test command, and CI's) brings the
// cluster up and runs them with `go test -tags e2e ./test/e2e`. By hand:
//
//	hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"
//	go test -tags e2e ./test/e2e
//	hack/local-cluster.sh down
package e2e
