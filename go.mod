module github.com/vkflow/vkflow

go 1.26
