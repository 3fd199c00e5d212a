package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

// newHealthcheckCmd is the container health check of images without a
// shell or wget (deploy/images): GET a local URL, exit 0 on 2xx.
func newHealthcheckCmd(*env) *cobra.Command {
	c := &cobra.Command{
		Use:   "healthcheck URL",
		Short: "exit 0 when GET URL answers 2xx within --timeout (a container's health check)",
		Long: `GET URL (http only, e.g. http://127.0.0.1:9101/readyz) and exit 0 when it
answers 2xx within --timeout, 1 otherwise: the health check of Cairn's images,
which have no shell or wget.`,
		Args: cobra.ExactArgs(1),
	}
	timeout := c.Flags().Duration("timeout", 3*time.Second, "how long to wait for the answer")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		u, err := url.Parse(args[0])
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return usagef("healthcheck: %q is not an http:// URL", args[0])
		}
		if *timeout <= 0 {
			return usagef("--timeout must be positive, got %s", *timeout)
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), *timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("healthcheck: %w", err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("healthcheck: %s answered %s", u.Redacted(), resp.Status)
		}
		return nil
	}
	return c
}
